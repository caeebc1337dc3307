import { Controller, Get, Inject, Query } from '@nestjs/common';
import { InvalidRequestError } from '@tda/flow-engine';
import { SCHEDULE_LIST_LIMIT_MAX, type SignalListPage, type SignalStore } from '@tda/flow-store';
import { parseSymbolKey } from '@tda/report-index';
import { Access } from '../auth/access.decorator';
import { Owner } from '../auth/acting-owner';
import { strictQuery } from '../runs/run-list-query';
import { SIGNAL_STORE } from './schedules.tokens';

/**
 * `GET /signals?symbol=&limit=&cursor=`: the request owner's signals (flow 7), newest first,
 * keyset pages; `symbol` in any spelling of the pair (BTC-USDT, btc/usdt).
 */
@Controller('signals')
@Access('user')
export class SignalsController {
  constructor(@Inject(SIGNAL_STORE) private readonly signals: SignalStore) {}

  @Get()
  list(@Query() query: Record<string, unknown>, @Owner() owner: string): Promise<SignalListPage> {
    const { symbol, limit, cursor } = strictQuery(query, ['symbol', 'limit', 'cursor']);
    const parsed = limit === undefined ? 20 : /^[0-9]{1,3}$/.test(limit) ? Number(limit) : NaN;
    if (!(parsed >= 1 && parsed <= SCHEDULE_LIST_LIMIT_MAX)) {
      throw new InvalidRequestError(`limit must be an integer in 1..${SCHEDULE_LIST_LIMIT_MAX}`, {
        parameter: 'limit',
      });
    }
    const symbolKey = symbol === undefined ? undefined : parseSymbolKey(symbol);
    if (symbol !== undefined && symbolKey === undefined) {
      throw new InvalidRequestError('symbol is not a trading pair (e.g. BTC-USDT)', {
        parameter: 'symbol',
      });
    }
    return this.signals.list({
      ownerId: owner,
      limit: parsed,
      ...(symbolKey === undefined ? {} : { symbolKey }),
      ...(cursor === undefined ? {} : { cursor }),
    });
  }
}
