package dev.fencing.agent.instrumentation.javahttpclient;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.HttpAttempt;
import dev.fencing.agent.bootstrap.WithoutFencingHeaders;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.concurrent.CompletableFuture;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;

/**
 * On the private {@code HttpClientImpl.sendAsync(request, handler, pushHandler, executor)}, which {@code send} and
 * both public {@code sendAsync} pass through. The request is immutable: a copy carrying the pair replaces argument 0,
 * so the caller's object is never changed. A blocked request never reaches the network: the method is skipped and
 * returns a failed future ({@code send} turns it into an IOException). Inlined into java.net.http: bootstrap and JDK
 * classes only, no lambdas.
 */
public final class SendAsyncAdvice {
  private SendAsyncAdvice() {}

  // A blocked request is a returned failed future, never an exception: any exception is the agent's, counted by
  // HttpAttempt (suppressed besides), and the request then goes on untagged.
  @Advice.OnMethodEnter(skipOn = Advice.OnNonDefaultValue.class, suppress = Throwable.class)
  public static CompletableFuture<?> enter(@Advice.Argument(value = 0, readOnly = false) HttpRequest request) {
    try {
      URI uri = request.uri();
      Decision d = HttpAttempt.decide(request.method(), uri.getScheme(), uri.getHost(), uri.getPort());
      if (d.isTag()) {
        // The copy starts without any Fencing-* header of the caller's, so each is carried exactly once.
        HttpRequest.Builder b = HttpRequest.newBuilder(request, WithoutFencingHeaders.INSTANCE);
        String[] h = d.httpHeaders();
        for (int i = 0; i < h.length; i += 2) {
          b.header(h[i], h[i + 1]);
        }
        request = b.build();
      }
      return null;
    } catch (Throwable blockedOrAgentError) {
      return HttpAttempt.failedFuture(blockedOrAgentError); // null after counting an agent error: the request goes on
    }
  }

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Enter CompletableFuture<?> blocked,
      @Advice.Return(readOnly = false, typing = Assigner.Typing.DYNAMIC) Object result) {
    if (blocked != null) {
      result = blocked;
    } else if (result instanceof CompletableFuture) {
      Fencing.http().observe((CompletableFuture<?>) result);
    }
  }
}
