// citty decides on colours when it is first imported: a help text piped to a file or a pager gets none.
// Imported first by cli.ts, before citty.
if (!process.stdout.isTTY && process.env.NO_COLOR === undefined) process.env.NO_COLOR = "1";
