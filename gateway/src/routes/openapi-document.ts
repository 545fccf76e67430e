import type Router from "@koa/router";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";

/**
 * The merchant API's OpenAPI document, docs/openapi.yaml, read once at start-up. `entryDir` is the
 * directory of the gateway's entry: `gateway/dist` in a build, where scripts/build-units.ts copies
 * the document beside the bundle, or `gateway/src` when run from the repository, whose docs/ holds it.
 */
export function readOpenApiDocument(entryDir: string): object {
  const candidates = [path.join(entryDir, "openapi.yaml"), path.join(entryDir, "..", "..", "docs", "openapi.yaml")];
  const file = candidates.find((candidate) => existsSync(candidate));
  if (!file) throw new Error(`the OpenAPI document is missing: none of ${candidates.join(", ")} exists`);
  return parse(readFileSync(file, "utf8")) as object;
}

/** GET /openapi.json: the document as JSON, without an API key. */
export function openApiDocumentRoute(router: Router, document: object): Router {
  const json = JSON.stringify(document);
  return router.get("/openapi.json", (ctx) => {
    ctx.type = "application/json";
    ctx.body = json;
  });
}
