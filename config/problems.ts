/**
 * Building `ConfigProblem`s whose message stands on its own: it names the file, the server and the field, because
 * the message is what people read (in a notification or `/mcp status`).
 */
import type { ConfigProblem } from "../types.ts";

export interface ProblemLocation {
  file: string;
  server?: string;
  field?: string;
}

export function configProblem(level: ConfigProblem["level"], where: ProblemLocation, text: string): ConfigProblem {
  const parts = [where.file];
  if (where.server !== undefined) parts.push(`server "${where.server}"`);
  if (where.field !== undefined) parts.push(`"${where.field}"`);
  const problem: ConfigProblem = { level, file: where.file, message: `${parts.join(": ")}: ${text}` };
  if (where.server !== undefined) problem.server = where.server;
  if (where.field !== undefined) problem.field = where.field;
  return problem;
}
