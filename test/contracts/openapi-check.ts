// Holds a real HTTP answer against the OpenAPI document: the operation's response for that
// status must exist, and the body must validate against its schema for the answer's media type.
import SwaggerParser from "@apidevtools/swagger-parser";
import { Ajv } from "ajv";
import addFormatsPlugin from "ajv-formats";
import type { OpenAPI } from "openapi-types";

type Json = Record<string, unknown>;

// ajv-formats is CommonJS with a default export; under ESM interop it may arrive wrapped.
const addFormats = (addFormatsPlugin as unknown as { default?: typeof addFormatsPlugin }).default ?? addFormatsPlugin;

export class OpenApiChecker {
  // Ajv reads OpenAPI 3.0's `nullable` itself; `x-` extensions are annotations to it.
  readonly #ajv = new Ajv({ strict: false, allErrors: true });
  /** Every operation and status checked, for the test to say how much was covered. */
  readonly checked: string[] = [];

  private constructor(private readonly paths: Record<string, Record<string, Json>>) {
    addFormats(this.#ajv);
  }

  static async load(url: string): Promise<OpenApiChecker> {
    const doc = (await (await fetch(url)).json()) as OpenAPI.Document;
    const resolved = (await SwaggerParser.dereference(doc)) as unknown as { paths: Record<string, Record<string, Json>> };
    return new OpenApiChecker(resolved.paths);
  }

  /** The problems of one answer against `method path` (an OpenAPI path template); [] when it conforms. */
  check(method: string, path: string, status: number, contentType: string | null, body: unknown): string[] {
    const item = this.paths[path];
    // A verb a path does not serve answers the 405 its served verbs document.
    const op = item?.[method.toLowerCase()] ?? (status === 405 && item ? Object.values(item).find((o) => typeof o.responses === "object" && o.responses !== null && "405" in o.responses) : undefined);
    if (!op) return [`${method} ${path} is not in the document`];
    const responses = op.responses as Record<string, Json | undefined>;
    const response = responses[String(status)] ?? responses.default;
    if (!response) return [`${method} ${path} does not document status ${status}`];
    this.checked.push(`${method} ${path} ${status}`);
    const content = response.content as Record<string, { schema?: Json } | undefined> | undefined;
    if (!content) return [];
    const type = (contentType ?? "").split(";")[0]?.trim() ?? "";
    const media = content[type] ?? Object.entries(content).find(([k]) => k.endsWith("/*") && type.startsWith(k.slice(0, -1)))?.[1];
    if (!media) return [`${method} ${path} ${status}: ${type} is not one of ${Object.keys(content).join(", ")}`];
    if (!media.schema || type !== "application/json") return [];
    const validate = this.#ajv.compile(media.schema);
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${method} ${path} ${status}: ${e.instancePath || "/"} ${e.message ?? ""} ${JSON.stringify(e.params)}`);
  }
}
