export * from './stub-news-server';
