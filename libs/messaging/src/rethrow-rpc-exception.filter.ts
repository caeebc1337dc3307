import { Catch, type RpcExceptionFilter } from '@nestjs/common';
import { type Observable, throwError } from 'rxjs';

/**
 * Nest's default RPC exception filter replaces any non-RpcException error by
 * `{ status: 'error', message: 'Internal server error' }` (and logs it through Nest's own
 * logger). The transport still nacks either way; registering this filter
 * (`app.useGlobalFilters(new RethrowRpcExceptionFilter())`) passes the original error through
 * so that the `message_handler_failed` line names the real error and its code.
 */
@Catch()
export class RethrowRpcExceptionFilter implements RpcExceptionFilter<unknown> {
  catch(exception: unknown): Observable<never> {
    return throwError(() => exception);
  }
}
