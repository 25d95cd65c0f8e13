import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hfToken } from "../../../src/workload/hf-hub.ts";

test("the hub token: HF_TOKEN, else HF_TOKEN_PATH, else HF_HOME/token, else the XDG cache, else ~/.cache, else none", () => {
  const dir = mkdtempSync(join(tmpdir(), "warmbench-hftoken-"));
  writeFileSync(join(dir, "token"), "hf_from_home\n");
  writeFileSync(join(dir, "explicit"), "  hf_from_path  ");
  const empty = mkdtempSync(join(tmpdir(), "warmbench-hftoken-empty-"));
  expect(hfToken({ HF_TOKEN: "hf_env", HF_HOME: dir })).toBe("hf_env");
  expect(hfToken({ HF_TOKEN_PATH: join(dir, "explicit"), HF_HOME: dir })).toBe("hf_from_path");
  expect(hfToken({ HF_HOME: dir })).toBe("hf_from_home");
  const xdg = mkdtempSync(join(tmpdir(), "warmbench-hftoken-xdg-"));
  Bun.spawnSync(["mkdir", "-p", join(xdg, "huggingface")]);
  writeFileSync(join(xdg, "huggingface", "token"), "hf_from_xdg");
  expect(hfToken({ XDG_CACHE_HOME: xdg, HOME: empty })).toBe("hf_from_xdg");
  expect(hfToken({ HF_HOME: empty })).toBeUndefined();
  const home = mkdtempSync(join(tmpdir(), "warmbench-hftoken-home-"));
  Bun.spawnSync(["mkdir", "-p", join(home, ".cache", "huggingface")]);
  writeFileSync(join(home, ".cache", "huggingface", "token"), "hf_from_home_cache\n");
  expect(hfToken({ HOME: home })).toBe("hf_from_home_cache");
});
