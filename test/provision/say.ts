/** One line per thing the test command provisions, on stderr so that stdout ends with "N passed, N failed". */
export const say = (message: string): void => {
  process.stderr.write(`[provision] ${message}\n`);
};
