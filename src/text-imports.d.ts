/** Files imported `with { type: "text" }` (embedded in the compiled binary as strings). */
declare module "*.client.js" {
  const text: string;
  export default text;
}
declare module "*.umd.min.js" {
  const text: string;
  export default text;
}
declare module "*.css" {
  const text: string;
  export default text;
}
