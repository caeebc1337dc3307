import { SetMetadata } from '@nestjs/common';

/**
 * The authorization decision of a route, required on every one (boot refuses a route without):
 * `public` needs no credential, `user` any principal (data filtered by its owner), `admin` the
 * admin role (403 FORBIDDEN otherwise).
 */
export type AccessLevel = 'public' | 'user' | 'admin';
export const ACCESS_METADATA = 'tda:access';

export const Access = (level: AccessLevel): MethodDecorator & ClassDecorator =>
  SetMetadata(ACCESS_METADATA, level);
