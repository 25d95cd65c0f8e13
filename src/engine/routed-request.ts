/**
 * One measured request over several replicas: sent where the client's router picks (counted in flight there until it
 * ends), or, behind a router (--replicas), to the router with the session key in the header it reads, the replica
 * its response names kept for the ledger.
 */
import { streamRequest } from "../client/stream.ts";
import type { StreamRequest } from "../client/stream-request.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { ReplicaRouter } from "./replica-router.ts";

/** `key`: the request's key among the router's (its index; a multi-turn turn's round and conversation). */
export function routedRequest(router: ReplicaRouter, request: StreamRequest, key: number, generatePath: string): Promise<RequestRecord> {
  const via = router.via;
  if (via !== null) {
    const headers = via.keyHeader === null ? request.headers : { ...request.headers, [via.keyHeader]: router.sessionOf(key) };
    return streamRequest({ ...request, url: via.url + generatePath, headers, servedByHeader: via.servedHeader }).then((rec) => {
      router.attribute(key, rec.servedBy);
      return rec;
    });
  }
  const replica = router.pick(key);
  return streamRequest({ ...request, url: router.urls[replica]! + generatePath }).then((rec) => {
    router.done(replica);
    return rec;
  });
}
