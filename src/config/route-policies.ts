/** The client-side routing policies over replicas (`--route`; src/engine/replica-router.ts says what each does). */
export const ROUTE_POLICIES = ["round-robin", "random", "least-in-flight", "session", "prefix", "oracle"] as const;
export type RoutePolicy = (typeof ROUTE_POLICIES)[number];
