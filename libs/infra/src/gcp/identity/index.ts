export * from './apply-identity';
export * from './artifacts-bucket';
export * from './iam-bindings';
export * from './image-repository';
export * from './project-number';
export * from './secret-containers';
export * from './service-accounts';
export * from './service-iam-bindings';
