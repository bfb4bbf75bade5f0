package dev.fencing.agent.token;

/** Why a lease was lost; the {@code reason} label of fencing_lease_losses_total. */
public enum LossReason {
  /** Keepalives failed (etcd unreachable or erroring) until the local deadline passed. */
  KEEPALIVE_FAILED("keepalive_failed"),
  /** etcd answered a keepalive with "no such lease": revoked, or expired on the server. */
  LEASE_REVOKED("lease_revoked"),
  /** The lock key was deleted (by an operator, or with its lease). */
  KEY_DELETED("key_deleted"),
  /** The local deadline passed with no keepalive failure seen (e.g. the process was paused). */
  DEADLINE_PASSED("deadline_passed");

  private final String label;

  LossReason(String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }
}
