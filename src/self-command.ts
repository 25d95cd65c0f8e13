/**
 * How to start this program again: the relaunch with a larger fetch cap, the demo's mock server, worker processes.
 * In a compiled binary argv[1] is the embedded script (/$bunfs/...) and execPath is the binary itself; from source,
 * execPath is bun and argv[1] the entry script.
 */

/** The argv prefix that runs warmbench again (append a command and its flags). */
export function selfCommand(): string[] {
  const compiled = process.argv[1]?.startsWith("/$bunfs/") ?? false;
  return compiled || process.argv[1] === undefined ? [process.execPath] : [process.execPath, process.argv[1]];
}

/** This process's own arguments, after the program. */
export function selfArgs(): string[] {
  return process.argv.slice(2);
}
