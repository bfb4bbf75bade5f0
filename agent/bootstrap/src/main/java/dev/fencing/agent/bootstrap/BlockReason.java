package dev.fencing.agent.bootstrap;

/** Why a side effect was (or, in observe mode, would have been) blocked. */
public enum BlockReason {
  STANDBY("standby", "this process has not acquired the lease"),
  EXPIRED("expired", "the lease expired (local deadline passed)"),
  LOST("lost", "the lease was lost"),
  TOKEN_REUSED("token_reused", "the fencing token was reused (etcd data loss or restore?)"),
  TOKEN_OVERFLOW("token_overflow", "the fencing token is above fencing.token.max"),
  AGENT_FAILED("agent_failed", "the agent is misconfigured or could not start (fencing.fail-mode=closed)"),
  HOOK_FAILED("hook_failed", "the agent failed while handling this call (fencing.fail-mode=closed)");

  private final String label;
  private final String description;

  BlockReason(String label, String description) {
    this.label = label;
    this.description = description;
  }

  public String label() {
    return label;
  }

  public String description() {
    return description;
  }
}
