export * from './expect-eventually';
export * from './emulators';
export * from './rejection';
export * from './firestore-index-coverage';
