/**
 * The few Express request/response members the orchestrator touches, typed structurally: the
 * workspace does not ship @types/express, and these are all we rely on.
 */
export interface HttpRequest {
  method: string;
  /** Path + query as received. */
  originalUrl: string;
  path: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  query: Readonly<Record<string, unknown>>;
  body: unknown;
}

export interface HttpResponse {
  status(code: number): HttpResponse;
  json(body: unknown): HttpResponse;
  setHeader(name: string, value: string): HttpResponse;
  headersSent: boolean;
  statusCode: number;
  on(event: 'finish', listener: () => void): HttpResponse;
}

export type NextFunction = (error?: unknown) => void;

/** The single value of a header (the first one if repeated), or undefined. */
export function headerValue(
  request: Pick<HttpRequest, 'headers'>,
  name: string,
): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}
