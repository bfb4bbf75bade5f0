package dev.fencing.agent.bootstrap;

/** The kinds of side effect the agent fences. Also the {@code channel} label of the metrics. */
public enum Channel {
  JDBC("jdbc"),
  HTTP("http"),
  KAFKA("kafka");

  private final String label;

  Channel(String label) {
    this.label = label;
  }

  /** Lower-case name used in metric labels and messages. */
  public String label() {
    return label;
  }
}
