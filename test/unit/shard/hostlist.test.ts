import { describe, expect, test } from "bun:test";
import { expandHostlist } from "../../../src/shard/hostlist.ts";

describe("Slurm host lists", () => {
  test("plain names, ranges with zero padding, lists inside brackets, several groups", () => {
    expect(expandHostlist("localhost")).toEqual(["localhost"]);
    expect(expandHostlist("node[01-03,07]")).toEqual(["node01", "node02", "node03", "node07"]);
    expect(expandHostlist("gpu-a,big[1-2]-ib,c[9-10]")).toEqual(["gpu-a", "big1-ib", "big2-ib", "c9", "c10"]);
    expect(expandHostlist("rack[1-2]n[1-2]")).toEqual(["rack1n1", "rack1n2", "rack2n1", "rack2n2"]);
    expect(expandHostlist("a,b")).toEqual(["a", "b"]);
  });

  test("malformed lists are refused naming the list", () => {
    expect(() => expandHostlist("node[1-3")).toThrow('host list "node[1-3" has unbalanced brackets');
    expect(() => expandHostlist("node[3-1]")).toThrow("descending range");
    expect(() => expandHostlist("node[a-b]")).toThrow('bad range "a-b"');
    expect(() => expandHostlist("node[1-99999999]")).toThrow("more than 100000 hosts");
  });
});
