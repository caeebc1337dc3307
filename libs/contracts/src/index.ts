export * from './generated/types';
export * from './generated/catalogue';
export * from './generated/validate';
export * from './validation';
export * from './tda-error';
