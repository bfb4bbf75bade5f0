package dev.fencing.agent.instrumentation.kafkaclients;

import dev.fencing.agent.bootstrap.Fencing;
import java.util.Iterator;
import net.bytebuddy.asm.Advice;

/** Wraps the iterator so each record's token is current while the application processes it (KafkaHook#consumed). */
public final class RecordsIteratorAdvice {
  private RecordsIteratorAdvice() {}

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Return(readOnly = false) Iterator<?> records) {
    records = Fencing.kafka().consumed(records);
  }
}
