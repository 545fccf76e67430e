/**
 * Checks real HTTP answers (and webhooks) against the OpenAPI document with Ajv, whose JSON Schema
 * 2020-12 is OpenAPI 3.1's schema dialect. An answer conforms when its status is documented for
 * its path and method, every header the document requires is there and every documented header
 * present matches its schema, its media type is documented and its body matches that schema.
 *
 * The document's object schemas stay open, since /v1 grows by adding fields and merchants must
 * ignore the ones they do not know; here every object schema that names its properties is closed,
 * so an answer carrying a field the document does not name fails.
 */
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";

type Node = Record<string, any>;

export interface Exchange {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** Parsed JSON, the text of any other body, or null when empty. */
  body: unknown;
}

const STRICT = { strict: true, strictTypes: false, strictRequired: false } as const;
const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"];

/** Closes every object schema that names its properties (see the file's comment). */
function closeObjectSchemas(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(closeObjectSchemas);
  if (node === null || typeof node !== "object") return;
  const schema = node as Node;
  if (schema.type === "object" && schema.properties && schema.additionalProperties === undefined) schema.additionalProperties = false;
  for (const [key, value] of Object.entries(schema)) if (key !== "examples") closeObjectSchemas(value);
}

/** A path template's matcher: each `{parameter}` stands for one path segment. */
const templateRegExp = (template: string) => new RegExp(`^${template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[^/]+")}$`);

/** JSON Pointer escaping of one reference token. */
const token = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");

export class OpenApiChecker {
  /** "METHOD /path" of every operation checked, and "webhook <name>" of every webhook. */
  readonly exercised = new Set<string>();
  // Strict about unknown keywords (a misspelt keyword would check nothing), not about the
  // 2020-12 idioms the document uses: `properties` or `required` in a subschema without `type`.
  private readonly bodies = new Ajv2020({ ...STRICT, allErrors: true, allowUnionTypes: true });
  // Header values are strings on the wire: this one coerces them to the schema's type first.
  private readonly headerValues = new Ajv2020({ ...STRICT, allErrors: true, coerceTypes: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly document: Node) {
    const closed = structuredClone(document);
    closeObjectSchemas(closed);
    for (const ajv of [this.bodies, this.headerValues]) {
      addFormats(ajv);
      // The document is added whole, so that its `#/…` references resolve; its top-level
      // fields are not JSON Schema keywords, and strict mode must be told they are known.
      ajv.addVocabulary(Object.keys(closed));
      ajv.addSchema(closed, "openapi");
    }
  }

  /** Every operation the document names, as recorded in {@link exercised}. */
  documented(): string[] {
    const paths = Object.entries(this.document.paths as Node).flatMap(([path, item]) => METHODS.filter((m) => m in item).map((m) => `${m.toUpperCase()} ${path}`));
    return [...paths, ...Object.keys(this.document.webhooks ?? {}).map((name) => `webhook ${name}`)];
  }

  /**
   * Checks one answer of `method` on `url` (path and query), and, for a 2xx answer, the JSON
   * request body it took. Fails the test with every problem found.
   */
  check(method: string, url: string, answer: Exchange, requestJson?: unknown): void {
    const path = url.split("?")[0];
    const template = Object.keys(this.document.paths).find((t) => templateRegExp(t).test(path));
    const problems: string[] = [];
    const at = `${method} ${path} → ${answer.status}`;
    const operation = template && this.document.paths[template][method.toLowerCase()];
    if (!operation) problems.push("the document has no such operation");
    else {
      const pointer = `#/paths/${token(template)}/${method.toLowerCase()}`;
      this.exercised.add(`${method.toUpperCase()} ${template}`);
      const status = String(answer.status);
      const key = [status, `${status[0]}XX`, "default"].find((k) => k in operation.responses);
      if (!key) problems.push(`status ${status} is not documented`);
      else problems.push(...this.responseProblems(`${pointer}/responses/${token(key)}`, answer));
      if (answer.status < 300 && requestJson !== undefined) problems.push(...this.requestProblems(`${pointer}/requestBody`, requestJson));
    }
    expect({ at, problems }).toEqual({ at, problems: [] });
  }

  /** Checks a webhook request (its headers and body) against the document's webhook `name`. */
  checkWebhook(name: string, headers: Record<string, string>, body: unknown): void {
    const pointer = `#/webhooks/${token(name)}/post`;
    const operation = this.document.webhooks[name].post;
    const problems: string[] = [];
    operation.parameters.forEach((parameter: Node, i: number) => {
      if (parameter.in === "header") problems.push(...this.headerProblems(`${pointer}/parameters/${i}`, parameter, headers[parameter.name.toLowerCase()]));
    });
    problems.push(...this.requestProblems(`${pointer}/requestBody`, body));
    this.exercised.add(`webhook ${name}`);
    const at = `webhook ${name}`;
    expect({ at, problems }).toEqual({ at, problems: [] });
  }

  private responseProblems(pointer: string, answer: Exchange): string[] {
    const [response, at] = this.resolve(pointer);
    const problems: string[] = [];
    for (const name of Object.keys(response.headers ?? {})) {
      const [header, headerAt] = this.resolve(`${at}/headers/${token(name)}`);
      problems.push(...this.headerProblems(headerAt, { name, ...header }, answer.headers[name.toLowerCase()]));
    }
    if (!response.content) return answer.body === null ? problems : [...problems, "a body where the document has none"];
    const type = (answer.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
    if (!(type in response.content)) return [...problems, `content type "${type}" is not documented`];
    return [...problems, ...this.schemaProblems(this.bodies, { $ref: `openapi${at}/content/${token(type)}/schema` }, answer.body, "body")];
  }

  private requestProblems(pointer: string, json: unknown): string[] {
    const [requestBody, at] = this.resolve(pointer);
    if (!requestBody?.content?.["application/json"]) return [];
    return this.schemaProblems(this.bodies, { $ref: `openapi${at}/content/application~1json/schema` }, json, "request body");
  }

  /** `header` is a header or parameter object (with its `name`) found at `pointer`. */
  private headerProblems(pointer: string, header: Node, value: string | undefined): string[] {
    if (value === undefined) return header.required ? [`required header ${header.name} is missing`] : [];
    // Wrapped in an object: Ajv coerces properties, not a root value.
    const wrapped = { type: "object", properties: { value: { $ref: `openapi${pointer}/schema` } } };
    return this.schemaProblems(this.headerValues, wrapped, { value }, `header ${header.name}`).map((problem) => problem.replace("/value ", " "));
  }

  /** Body schemas are `$ref`s and header schemas wrapped ones: their keys never collide. */
  private schemaProblems(ajv: Ajv2020, schema: object, data: unknown, what: string): string[] {
    const key = JSON.stringify(schema);
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = ajv.compile(schema);
      this.compiled.set(key, validate);
    }
    if (validate(data)) return [];
    return (validate.errors ?? []).map((e) => `${what}${e.instancePath} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ""}`);
  }

  /** The node at `pointer` (a `#/…` JSON Pointer), following `$ref`s, with the pointer it was found at. */
  private resolve(pointer: string): [Node, string] {
    let at = pointer;
    let node: Node = pointer
      .slice(2)
      .split("/")
      .reduce((n: Node, t) => n?.[t.replace(/~1/g, "/").replace(/~0/g, "~")], this.document);
    if (node?.$ref) [node, at] = this.resolve(node.$ref);
    return [node, at];
  }
}
