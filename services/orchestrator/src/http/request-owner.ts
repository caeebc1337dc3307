import { InvalidRequestError } from '@tda/flow-engine';
import { OWNER_ID_PATTERN } from '../config';
import { headerValue, type HttpRequest } from './http-types';

/** The header that names the owner a request acts for (README "Auth and owners"). */
export const OWNER_HEADER = 'X-TDA-Owner';

/**
 * The owner a request acts for: the X-TDA-Owner header, else the configured default owner. One
 * rule for every route that reads or writes owned data (runs, accounts, reports, recommendations).
 */
export function requestOwner(request: HttpRequest, defaultOwner: string): string {
  const header = headerValue(request, OWNER_HEADER);
  if (header === undefined) return defaultOwner;
  if (!OWNER_ID_PATTERN.test(header)) {
    throw new InvalidRequestError(`${OWNER_HEADER} is not a valid owner id`, {
      header: OWNER_HEADER,
      pattern: OWNER_ID_PATTERN.source,
    });
  }
  return header;
}
