export * from './message-broker.conformance';
