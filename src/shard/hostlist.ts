/**
 * Slurm's compact host lists ("node[01-03,07],gpu-a,big[1-2]-ib") expanded in order, without scontrol: every
 * shard must agree on the coordinator's host, and tasks may run where scontrol is not installed.
 */

/** Largest list expanded: a typo like node[1-99999999] must not eat the memory. */
const MAX_HOSTS = 100_000;

/** The hosts of a Slurm host list, in order; throws an Error naming the list when it is malformed. */
export function expandHostlist(list: string): string[] {
  const hosts: string[] = [];
  for (const item of splitTopLevel(list.trim())) {
    if (item === "") continue;
    for (const host of expandItem(item, list)) {
      hosts.push(host);
      if (hosts.length > MAX_HOSTS) throw new Error(`host list "${list}" has more than ${MAX_HOSTS} hosts`);
    }
  }
  return hosts;
}

/** Splits on commas outside brackets. */
function splitTopLevel(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (c === "[") depth++;
    else if (c === "]") depth--;
    else if (c === "," && depth === 0) {
      parts.push(list.slice(start, i));
      start = i + 1;
    }
    if (depth < 0 || depth > 1) throw new Error(`host list "${list}" has unbalanced brackets`);
  }
  if (depth !== 0) throw new Error(`host list "${list}" has unbalanced brackets`);
  parts.push(list.slice(start));
  return parts;
}

/** One item: plain name, or prefix[ranges]suffix where the suffix may hold further brackets. */
function expandItem(item: string, list: string): string[] {
  const open = item.indexOf("[");
  if (open < 0) return [item];
  const close = item.indexOf("]", open);
  if (close < 0) throw new Error(`host list "${list}" has unbalanced brackets`);
  const prefix = item.slice(0, open);
  const tails = expandItem(item.slice(close + 1), list);
  const out: string[] = [];
  for (const part of item.slice(open + 1, close).split(",")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw new Error(`host list "${list}" has a bad range "${part}"`);
    const [from, to = from] = [m[1]!, m[2]];
    const width = from.length;
    const lo = Number(from);
    const hi = Number(to);
    if (hi < lo) throw new Error(`host list "${list}" has a descending range "${part}"`);
    if (hi - lo > MAX_HOSTS) throw new Error(`host list "${list}" has more than ${MAX_HOSTS} hosts`);
    for (let n = lo; n <= hi; n++) {
      const name = prefix + String(n).padStart(width, "0");
      for (const tail of tails) out.push(name + tail);
    }
  }
  return out;
}
