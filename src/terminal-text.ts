/**
 * Text from servers reaches a terminal only escaped: a /server_info version holding `ESC]0;...BEL ESC[2J` would
 * retitle and clear the terminal (and hide a CI log's lines). Every control character but newline and tab is shown
 * as `\xNN` instead, on stdout, in every log line and in the one error line.
 */

// C0 controls but \t and \n, DEL, and the C1 controls (a bare 0x9b is a CSI on some terminals).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is what this expression is for
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export const escapeControls = (text: string): string => text.replace(CONTROLS, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
