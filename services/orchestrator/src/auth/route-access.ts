import { RequestMethod, type Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ACCESS_METADATA, type AccessLevel } from './access.decorator';

export interface RouteAccess {
  method: string;
  /** Express-style path, e.g. /runs/:runId. */
  path: string;
  access: AccessLevel | undefined;
  handler: string;
}

function joinPath(prefix: unknown, path: unknown): string {
  const parts = [prefix, path]
    .map((p) => (typeof p === 'string' ? p : ''))
    .flatMap((p) => p.split('/'))
    .filter((p) => p !== '');
  return `/${parts.join('/')}`;
}

function metadataOf(key: string, target: object): unknown {
  return Reflect.getMetadata(key, target) as unknown;
}

/** Every HTTP route of these controllers with its access decision (message handlers have none). */
export function routeAccessTable(controllers: readonly Type[]): RouteAccess[] {
  const rows: RouteAccess[] = [];
  for (const controller of controllers) {
    const prefix = metadataOf(PATH_METADATA, controller);
    const classAccess = metadataOf(ACCESS_METADATA, controller) as AccessLevel | undefined;
    const proto = controller.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const handler = proto[name];
      if (name === 'constructor' || typeof handler !== 'function') continue;
      const path = metadataOf(PATH_METADATA, handler);
      const method = metadataOf(METHOD_METADATA, handler);
      if (path === undefined || typeof method !== 'number') continue;
      const access = metadataOf(ACCESS_METADATA, handler) as AccessLevel | undefined;
      rows.push({
        method: RequestMethod[method] ?? String(method),
        path: joinPath(prefix, path),
        access: access ?? classAccess,
        handler: `${controller.name}.${name}`,
      });
    }
  }
  return rows;
}

/** Boot check: a route nobody decided about is a bug, not an open door. */
export function assertEveryRouteDecided(controllers: readonly Type[]): void {
  const missing = routeAccessTable(controllers).filter((r) => r.access === undefined);
  if (missing.length > 0) {
    const list = missing.map((r) => `${r.method} ${r.path} (${r.handler})`).join(', ');
    throw new Error(`routes without an authorization decision (@Access): ${list}`);
  }
}
