/** AccountStore (@tda/accounts): accounts/{accountId}. */
export const ACCOUNT_STORE = Symbol('tda.orchestrator.accountStore');
