/**
 * The layers of src/ (issue 18, docs/style.md "0.3: a target layout"), checked by dependency-cruiser in the test
 * suite (test/unit/layers.test.ts): `npx depcruise src --config .dependency-cruiser.cjs`.
 * Each layer imports only from the layers listed before it; nothing imports upward; no cycles anywhere in src/;
 * the mock imports only itself, the error type and the logger; every file in src/ belongs to a layer.
 */
/** The producers: each says what to send; none imports another. */
const PRODUCERS = ["sweep", "multiturn", "capacity", "replay", "passport"];
const LAYERS = [
  // Shared by every layer (the mock included): the error type, the logger, and process-wide helpers.
  ["base", "^src/(errors|log|interrupt|version|no-color|self-command|write-guard|terminal-text)\\.ts$"],
  ["schema", "^src/schema/"], // line and record types, key lists; imports nothing
  ["config", "^src/config/"], // enums, defaults, option types
  ["workload", "^src/workload/"], // tokenizer, rng, prompts, arrivals, the prompt worker
  ["backends", "^src/backends/"], // engine x wire adapters
  ["client", "^src/client/"], // fetch, SSE, dispatcher, clock
  ["metrics", "^src/metrics/"], // pure summaries, HDR, fits, cache check, merge math
  ["gates", "^src/gates/"], // parse and judge lines
  ["shard", "^src/shard/"], // protocol, coordinator, placement
  ["engine", "^src/engine/"], // reset+prove, warm, send, gather, summarize (issue 18, item 2)
  ["producers", `^src/(${PRODUCERS.join("|")})/`], // what to send (replay: a trace, token-exact)
  ["report", "^src/report/"], // pure renderers
  ["output", "^src/output/"], // JSONL + fsync, request details, step summary, progress
  ["compare", "^src/compare/"], // consumers of lines across runs
  ["history", "^src/history/"], // consumers of points across runs: the SQLite history, baselines for compare
  ["cli", "^src/(cli/|cli\\.ts$)"], // commands, flags, wiring: may import everything
];
const MOCK = "^src/mock/";
const ALL = [...LAYERS.map(([, path]) => path), MOCK, "\\.d\\.ts$"];

module.exports = {
  forbidden: [
    { name: "no-circular", severity: "error", comment: "An import cycle in src/.", from: { path: "^src/" }, to: { circular: true } },
    ...LAYERS.slice(0, -1).map(([name, from], i) => ({
      name: `${name}-imports-upward`,
      severity: "error",
      comment: `${name} imports only from the layers below it (${LAYERS.slice(0, i).map(([n]) => n).join(", ") || "nothing"}).`,
      from: { path: from },
      to: { path: LAYERS.slice(i + 1).map(([, path]) => path) },
    })),
    {
      name: "mock-apart",
      severity: "error",
      comment: "The mock shares no code with the client: it imports only src/mock, src/errors.ts and src/log.ts.",
      from: { path: MOCK },
      to: { path: "^src/", pathNot: [MOCK, "^src/(errors|log)\\.ts$"] },
    },
    {
      name: "only-cli-starts-the-mock",
      severity: "error",
      comment: "Only the command line reaches the mock (warmbench mock).",
      from: { path: "^src/", pathNot: [MOCK, LAYERS.at(-1)[1]] },
      to: { path: MOCK },
    },
    // No producer imports another's internals: what they share is the measurement engine's (src/engine).
    ...PRODUCERS.flatMap((from) =>
      PRODUCERS.filter((to) => to !== from).map((to) => ({
        name: `${from}-not-into-${to}`,
        severity: "error",
        comment: `No producer imports another's internals: ${from} reaches what it shares with ${to} through src/engine.`,
        from: { path: `^src/${from}/` },
        to: { path: `^src/${to}/` },
      })),
    ),
    {
      name: "file-outside-layers",
      severity: "error",
      comment: "Every file in src/ belongs to a layer (add its folder to LAYERS in .dependency-cruiser.cjs).",
      from: { path: "^src/", pathNot: ALL },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^src/report/html/page\\.client\\.js$" },
    parser: "swc", // typescript 7 (the native compiler) has no JS API for dependency-cruiser; swc parses TypeScript
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    moduleSystems: ["es6", "cjs"],
  },
};
