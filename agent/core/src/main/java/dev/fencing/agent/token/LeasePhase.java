package dev.fencing.agent.token;

/** Where this JVM stands with its lease. */
public enum LeasePhase {
  /** The agent has not reached etcd yet. */
  STARTING,
  /** Connected and campaigning; never held the lease since start. */
  STANDBY,
  /** Holding a lease whose local deadline has not passed. */
  HOLDING,
  /** The local deadline passed before a keepalive was acknowledged; campaigning again. */
  EXPIRED,
  /** etcd said the lease or the lock key is gone; campaigning again. */
  LOST,
  /** Misconfigured, or etcd unreachable before the first lease: fencing.fail-mode decides. */
  FAILED
}
