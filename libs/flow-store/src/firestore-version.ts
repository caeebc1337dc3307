import { Timestamp } from '@google-cloud/firestore';

/**
 * The opaque version of a Firestore document: its update time exact to the nanosecond,
 * `<seconds>.<nanos:9>`, handed back as the `lastUpdateTime` precondition of a conditional write.
 */
export function firestoreVersionOf(time: Timestamp): string {
  return `${time.seconds}.${String(time.nanoseconds).padStart(9, '0')}`;
}

/** The update time a version stands for; null for a string no Firestore adapter produced. */
export function firestoreTimestampOf(version: string): Timestamp | null {
  const match = /^(\d{1,15})\.(\d{9})$/.exec(version);
  return match === null ? null : new Timestamp(Number(match[1]), Number(match[2]));
}
