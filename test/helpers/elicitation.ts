import type { ElicitationHandler } from "../../connection/session.ts";

/** The answer when nobody can be asked: accept the form as its defaults fill it. */
export const acceptElicitationDefaults: ElicitationHandler = async () => ({ action: "accept", content: {} });
