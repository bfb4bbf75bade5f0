package dev.fencing.agent.bootstrap;

import java.util.function.Function;

/**
 * The same exception for every record of a batch: what a producer batch failed by the agent gives each record's
 * callback and future (Kafka asks a function of the record's index). java.base types only.
 */
public final class FixedError implements Function<Integer, RuntimeException> {
  private final RuntimeException error;

  public FixedError(RuntimeException error) {
    this.error = error;
  }

  @Override
  public RuntimeException apply(Integer index) {
    return error;
  }
}
