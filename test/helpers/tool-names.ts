/** What every LLM provider accepts as a tool name (Anthropic, OpenAI, Google): the names the adapter gives must match. */
const VALID_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export function isValidToolName(name: string): boolean {
  return VALID_TOOL_NAME.test(name);
}
