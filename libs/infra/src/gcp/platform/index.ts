export * from './cloud-run-services';
export * from './cloud-scheduler';
export * from './firestore-assets';
export * from './firestore-database';
export * from './firestore-indexes';
export * from './firestore-rules';
export * from './pubsub-platform';
