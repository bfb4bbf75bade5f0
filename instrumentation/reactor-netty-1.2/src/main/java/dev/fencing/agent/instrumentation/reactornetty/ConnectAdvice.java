package dev.fencing.agent.instrumentation.reactornetty;

import dev.fencing.agent.bootstrap.ReactorNettyHttp;
import dev.fencing.agent.bootstrap.TokenContext;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/**
 * HttpClientConnect.connect(): when the assembling thread carries an inbound token or a section scope, the returned
 * Mono writes it into the Reactor context its connection and every attempt see ({@link ReactorNettyHttp#CONTEXT_KEY}),
 * read back on the event loop by {@link RequestWithBodyAdvice}. Nothing changes otherwise (the JVM-wide lock needs no
 * carrying, and a thread with nothing current allocates nothing). The context is the Mono's own: resubscriptions
 * ({@code retry()}, {@code repeat()}) keep it. Suppressed: an error here leaves the Mono as it was.
 */
public final class ConnectAdvice {
  private ConnectAdvice() {}

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) Object connection) {
    Object carried = TokenContext.carried();
    if (carried != null && connection instanceof Mono) {
      connection = ((Mono<?>) connection).contextWrite(Context.of(ReactorNettyHttp.CONTEXT_KEY, carried));
    }
  }
}
