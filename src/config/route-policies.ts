/** The client-side routing policies over replicas (`--route`; src/engine/replica-router.ts says what each does). */
export const ROUTE_POLICIES = ["round-robin", "random", "least-in-flight", "session", "prefix", "oracle"] as const;
export type RoutePolicy = (typeof ROUTE_POLICIES)[number];

/** --routing-key presets: the header each router reads a session key from (any other value is a header name). */
export const ROUTING_KEY_PRESETS: Record<string, string> = {
  smg: "X-SMG-Routing-Key",
  dynamo: "X-Dynamo-Session-ID",
  aiperf: "X-Session-Affinity",
};
