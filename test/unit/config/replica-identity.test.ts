/** One server under two names is one replica: loopback spellings, a host's case, an implied port. */
import { describe, expect, test } from "bun:test";
import { replicaNamedTwice } from "../../../src/config/replica-identity.ts";

describe("replicaNamedTwice", () => {
  test("127.0.0.1, localhost and [::1] on one port are one server; the same URL twice is named once", () => {
    expect(replicaNamedTwice(["http://127.0.0.1:8000", "http://localhost:8000"])).toBe("http://127.0.0.1:8000 and http://localhost:8000 are one server");
    expect(replicaNamedTwice(["http://[::1]:8000", "http://LOCALHOST:8000"])).toBe("http://[::1]:8000 and http://LOCALHOST:8000 are one server");
    expect(replicaNamedTwice(["http://a:1", "http://a:1"])).toBe("http://a:1");
  });

  test("an implied port is the scheme's; a host's case does not matter", () => {
    expect(replicaNamedTwice(["http://gpu1", "http://gpu1:80"])).not.toBeNull();
    expect(replicaNamedTwice(["https://gpu1", "https://GPU1:443"])).not.toBeNull();
  });

  test("other ports, schemes or hosts are other replicas", () => {
    expect(replicaNamedTwice(["http://localhost:8000", "http://localhost:8001"])).toBeNull();
    expect(replicaNamedTwice(["http://gpu1:8000", "https://gpu1:8000"])).toBeNull();
    expect(replicaNamedTwice(["http://gpu1:8000", "http://gpu2:8000", "http://127.0.0.1:8000"])).toBeNull();
  });
});
