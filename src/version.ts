import pkg from "../package.json" with { type: "json" };

/** warmbench's version, from package.json (compiled into the binary). */
export const VERSION: string = pkg.version;
