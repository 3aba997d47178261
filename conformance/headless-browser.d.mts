/** Follows an authorization URL's redirect to the callback, as a browser whose user approves at once would. */
export function follow(url: string): Promise<void>;
