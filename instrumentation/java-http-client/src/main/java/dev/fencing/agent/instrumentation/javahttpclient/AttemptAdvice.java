package dev.fencing.agent.instrumentation.javahttpclient;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.HttpAttempt;
import dev.fencing.agent.bootstrap.HttpHook;
import dev.fencing.agent.bootstrap.JdkHttpAttempts;
import java.lang.invoke.MethodHandles;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * On the private {@code MultiExchange.responseAsyncImpl()}, which starts each attempt of one send. The first attempt
 * was decided by {@link SendAsyncAdvice} on the caller's thread; every later one (a followed redirect, a retry, an
 * authentication round: a new unsafe request, perhaps after the deadline, perhaps toward another host) is decided here
 * for its own request ({@code currentreq}). A block skips the attempt and returns a failed future, the client's own
 * error path (send throws an IOException caused by the FencingBlockedException); the exchange never retries it. A tag
 * goes on as system headers when the attempt's request carries no pair of its own: a redirect or retry carries the
 * pair of the first attempt among the headers it copies, and the client writes those instead of system headers of
 * the same name, so the pair is carried once. Inlined into java.net.http: bootstrap and JDK classes only, no lambdas.
 */
public final class AttemptAdvice {
  private AttemptAdvice() {}

  // A block is a returned failed future: any exception is the agent's, counted by HttpAttempt (suppressed besides),
  // and the attempt goes on as built.
  @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
  public static CompletableFuture<?> enter(@Advice.FieldValue("attempts") AtomicInteger attempts,
      @Advice.FieldValue("max_attempts") int maxAttempts, @Advice.FieldValue("currentreq") HttpRequest request) {
    int before = attempts.get();
    if (before == 0 || before >= maxAttempts) {
      return null; // the first attempt (decided by SendAsyncAdvice), or one the exchange fails as too many retries
    }
    try {
      URI uri = request.uri();
      Decision d = HttpAttempt.decide(request.method(), uri.getScheme(), uri.getHost(), uri.getPort());
      if (d.isTag() && request.headers().firstValue(HttpHook.TOKEN_HEADER).isEmpty()) {
        if (!JdkHttpAttempts.httpClientReady()) {
          JdkHttpAttempts.initHttpClient(MethodHandles.lookup());
        }
        JdkHttpAttempts.setSystemHeaders(request, d);
      }
      return null;
    } catch (Throwable blockedOrAgentError) {
      return HttpAttempt.failedFuture(blockedOrAgentError); // null after counting an agent error: the attempt goes on
    }
  }

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Enter CompletableFuture<?> blocked,
      @Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) Object result) {
    if (blocked != null) {
      result = blocked;
    }
  }
}
