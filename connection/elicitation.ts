/**
 * Elicitation: a server asks the user to fill a small form in the middle of a tool call. With a UI, Pi's dialogs ask:
 * first the server's message with a choice, "Answer" (the form's questions follow) or "Decline" (a choice rather than
 * Pi's yes/no confirmation, which reads Esc as "no": the spec tells a refusal, `decline`, from a dismissal, `cancel`);
 * then one dialog per field: a choice for booleans and enums, a text input otherwise, comma-separated for multiple
 * choices. A field left empty keeps its default; Esc at any step cancels. Without a UI (print mode) nobody can answer:
 * the adapter then does not offer elicitation at all (see init.ts).
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/client";
import type { ElicitationHandler } from "./session.ts";
import { isJsonObject } from "../util/guards.ts";
import { DIALOG_TIMEOUT_MS } from "../ui.ts";

type Field = Record<string, unknown>;
type Value = string | number | boolean | string[];
interface Choice {
  value: string | boolean;
  label: string;
}
interface DialogOptions {
  signal: AbortSignal;
  timeout: number;
}

const SKIP = "(leave empty)";
const DECLINE = "Decline";

export function piElicitation(context: () => ExtensionContext | undefined): ElicitationHandler {
  return async (serverName, request, signal) => {
    const ctx = context();
    if (!ctx?.hasUI) return { action: "decline" };
    const options = { signal, timeout: DIALOG_TIMEOUT_MS };
    const answer = answerChoice(request);
    const picked = await ctx.ui.select(`MCP server "${serverName}" asks:\n${request.message}`, [answer, DECLINE], options);
    if (picked === undefined) return { action: "cancel" };
    if (picked !== answer) return { action: "decline" };
    return fillForm(ctx, request, options);
  };
}

/** "Answer (2 questions)": what picking it leads to; a form without fields is just agreed to. */
function answerChoice(request: ElicitRequestFormParams): string {
  const count = Object.keys(request.requestedSchema.properties ?? {}).length;
  if (count === 0) return "Accept";
  return `Answer (${count} question${count === 1 ? "" : "s"})`;
}

async function fillForm(ctx: ExtensionContext, request: ElicitRequestFormParams, options: DialogOptions): Promise<ElicitResult> {
  const schema = request.requestedSchema;
  const required = new Set(schema.required ?? []);
  const content: Record<string, Value> = {};
  for (const [name, field] of Object.entries(schema.properties ?? {}) as [string, Field][]) {
    const answer = await askField(ctx, titleOf(name, field), field, required.has(name), options);
    if (answer === null) return { action: "cancel" };
    if (answer !== undefined) content[name] = answer;
  }
  return { action: "accept", content };
}

/** The value; `undefined` for a field left empty (its default then applies); `null` when the user dismissed it. */
async function askField(
  ctx: ExtensionContext,
  title: string,
  field: Field,
  required: boolean,
  options: DialogOptions,
): Promise<Value | undefined | null> {
  const items = isJsonObject(field.items) ? field.items : undefined;
  const multiple = field.type === "array" && items ? choicesOf(items) : undefined;
  if (multiple) return askMany(ctx, title, multiple, field, options);
  const choices = choicesOf(field);
  if (choices) {
    const labels = choices.map((choice) => (choice.value === field.default ? `${choice.label} (default)` : choice.label));
    const picked = await ctx.ui.select(title, required ? labels : [...labels, SKIP], options);
    if (picked === undefined) return null;
    return picked === SKIP ? undefined : choices[labels.indexOf(picked)]?.value;
  }
  const fallback = field.default === undefined ? undefined : String(field.default);
  const typed = await ctx.ui.input(title, fallback, options);
  if (typed === undefined) return null;
  const text = typed.trim();
  if (text === "") return undefined;
  if (field.type !== "number" && field.type !== "integer") return text;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

/** Several choices: typed comma-separated (by label or value); unknown words are left out. */
async function askMany(
  ctx: ExtensionContext,
  title: string,
  choices: Choice[],
  field: Field,
  options: DialogOptions,
): Promise<string[] | undefined | null> {
  const defaults = Array.isArray(field.default) ? ` (default: ${field.default.join(", ")})` : "";
  const typed = await ctx.ui.input(
    `${title} — comma-separated, from: ${choices.map((choice) => choice.label).join(", ")}${defaults}`,
    undefined,
    options,
  );
  if (typed === undefined) return null;
  const words = typed
    .split(",")
    .map((word) => word.trim().toLowerCase())
    .filter(Boolean);
  const picked = choices.filter(
    (choice) => words.includes(choice.label.toLowerCase()) || words.includes(String(choice.value).toLowerCase()),
  );
  return picked.length > 0 ? picked.map((choice) => String(choice.value)) : undefined;
}

function choicesOf(field: Field): Choice[] | undefined {
  if (field.type === "boolean")
    return [
      { value: true, label: "yes" },
      { value: false, label: "no" },
    ];
  if (Array.isArray(field.enum)) {
    const names = Array.isArray(field.enumNames) ? field.enumNames : [];
    return field.enum.map((value, index) => ({ value: String(value), label: String(names[index] ?? value) }));
  }
  const variants = Array.isArray(field.oneOf) ? field.oneOf : Array.isArray(field.anyOf) ? field.anyOf : undefined;
  const choices = variants
    ?.filter(isJsonObject)
    .flatMap((variant) =>
      variant.const === undefined
        ? []
        : [{ value: String(variant.const), label: typeof variant.title === "string" ? variant.title : String(variant.const) }],
    );
  return choices && choices.length > 0 ? choices : undefined;
}

function titleOf(name: string, field: Field): string {
  const title = typeof field.title === "string" ? field.title : name;
  return typeof field.description === "string" ? `${title}: ${field.description}` : title;
}
