import { expect, test } from "bun:test";
import { redactSecrets } from "../../../src/engine/redact.ts";

test("the /server_info snapshot never carries keys or tokens", () => {
  const info = {
    api_key: "sk-live",
    admin_api_key: "adm",
    hf_token: "hf_x",
    page_size: 16,
    max_total_num_tokens: 1000,
    enable_cache_report: false,
    tokenizer_path: "/m",
    nested: { ssl_keyfile_password: "pw", port: 1 },
    unset_api_key: null,
    tokenizer_mode: "auto",
  };
  const out = redactSecrets(info);
  expect(out).toEqual({
    api_key: "(redacted)",
    admin_api_key: "(redacted)",
    hf_token: "(redacted)",
    page_size: 16,
    max_total_num_tokens: 1000,
    enable_cache_report: false,
    tokenizer_path: "/m",
    nested: { ssl_keyfile_password: "(redacted)", port: 1 },
    unset_api_key: null,
    tokenizer_mode: "auto",
  });
  expect(JSON.stringify(out)).not.toContain("sk-live");
});
