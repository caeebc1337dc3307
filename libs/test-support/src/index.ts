export * from './expect-eventually';
export * from './emulators';
