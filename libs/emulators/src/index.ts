export * from './emulators';
