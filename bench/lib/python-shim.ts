/**
 * Lets the reference script (bench_warm_cache.py) run without SGLang or transformers installed: tiny stand-ins
 * for `sglang.benchmark.utils` and `transformers`, written to a temp dir that goes first on PYTHONPATH.
 * The tokenizer comes from tokenizer.json via the `tokenizers` package when importable, else a crude
 * whitespace fallback (only the script's "retokenized" counts depend on it, never a timing).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const UTILS_PY = `
import json, os, re, resource

def remove_prefix(text, prefix):
    return text[len(prefix):] if text.startswith(prefix) else text

def set_ulimit(target_soft_limit=65535):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(target_soft_limit, hard) if hard != resource.RLIM_INFINITY else target_soft_limit
    if soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        except ValueError:
            pass

class _JsonTokenizer:
    """get_vocab() and encode() from a tokenizer.json, without the tokenizers package."""
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        vocab = spec["model"]["vocab"]
        if isinstance(vocab, list):  # Unigram: [[piece, score], ...]
            vocab = {piece: i for i, (piece, _score) in enumerate(vocab)}
        self._vocab = dict(vocab)
        for tok in spec.get("added_tokens", []):
            self._vocab[tok["content"]] = tok["id"]
    def get_vocab(self):
        return dict(self._vocab)
    def encode(self, text, add_special_tokens=True):
        # Crude: one id per whitespace-separated word (0 when unknown); used only for retokenized counts.
        return [self._vocab.get(w, 0) for w in re.findall(r"\\S+", text)]

class _HfTokenizer:
    def __init__(self, path):
        from tokenizers import Tokenizer
        self._tok = Tokenizer.from_file(path)
    def get_vocab(self):
        return self._tok.get_vocab(with_added_tokens=True)
    def encode(self, text, add_special_tokens=True):
        return self._tok.encode(text, add_special_tokens=add_special_tokens).ids

def get_tokenizer(name_or_path, *args, **kwargs):
    path = name_or_path
    if os.path.isdir(path):
        path = os.path.join(path, "tokenizer.json")
    try:
        return _HfTokenizer(path)
    except ImportError:
        return _JsonTokenizer(path)
`;

const TRANSFORMERS_PY = `
class PreTrainedTokenizerBase:
    pass
`;

/** Writes the shim packages under `dir` and returns the directory to put on PYTHONPATH. */
export function writePythonShim(dir: string): string {
  mkdirSync(join(dir, "sglang", "benchmark"), { recursive: true });
  mkdirSync(join(dir, "transformers"), { recursive: true });
  writeFileSync(join(dir, "sglang", "__init__.py"), "");
  writeFileSync(join(dir, "sglang", "benchmark", "__init__.py"), "");
  writeFileSync(join(dir, "sglang", "benchmark", "utils.py"), UTILS_PY);
  writeFileSync(join(dir, "transformers", "__init__.py"), TRANSFORMERS_PY);
  return dir;
}

/** Python interpreters to try, Debian's first (where apt installs python3-aiohttp). */
const CANDIDATES = ["/usr/bin/python3", "python3"];

/** The first interpreter that imports aiohttp, numpy and requests, with a note about tokenizers; null if none. */
export async function findPython(): Promise<{ exe: string; note: string } | null> {
  for (const exe of CANDIDATES) {
    try {
      const proc = Bun.spawn(
        [exe, "-c", "import aiohttp, numpy, requests\ntry:\n import tokenizers; print('tokenizers')\nexcept ImportError:\n print('fallback')"],
        {
          stdout: "pipe",
          stderr: "ignore",
        },
      );
      const out = (await new Response(proc.stdout).text()).trim();
      if ((await proc.exited) === 0) {
        const how = out === "tokenizers" ? "tokenizers package" : "crude whitespace tokenizer fallback (tokenizers not installed)";
        return { exe, note: `${exe} with aiohttp/numpy/requests; shim tokenizer: ${how}` };
      }
    } catch {
      // not installed at this path
    }
  }
  return null;
}
