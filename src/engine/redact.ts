/** Secrets never reach a results file: SGLang's /server_info lists every server argument, api keys included. */

/** api_key, admin_api_key, hf_token, ssl_keyfile_password...; not tokenizer_path or max_total_num_tokens. */
const SECRET_KEY = /(^|_)(key|token|secret|password|passwd|credential|credentials)(_|$)/i;

/** A copy with every secret-looking key's value replaced by "(redacted)", nested objects too. */
export function redactSecrets(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (SECRET_KEY.test(k) && v !== null && v !== false && typeof v !== "number") out[k] = "(redacted)";
    else if (v !== null && typeof v === "object" && !Array.isArray(v)) out[k] = redactSecrets(v as Record<string, unknown>);
    else out[k] = v;
  }
  return out;
}
