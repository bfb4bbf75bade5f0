package dev.fencing.agent.instrumentation.okhttp;

import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.bootstrap.HttpAttempt;
import dev.fencing.agent.bootstrap.HttpHook;
import dev.fencing.agent.bootstrap.RequestHeaders;
import java.io.IOException;
import java.util.List;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.implementation.bytecode.assign.Assigner;
import okhttp3.HttpUrl;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.internal.http.BridgeInterceptor;

/**
 * On RealInterceptorChain.proceed (see {@link RealInterceptorChainInstrumentation}); acts only when the interceptor
 * about to run is the BridgeInterceptor, i.e. once per attempt. Tags a copy of the request ({@code header} replaces,
 * so the pair is carried exactly once; the caller's Request is immutable and untouched); blocks by throwing
 * FencingBlockedException, an IOException, before ConnectInterceptor opens any connection: execute() throws it,
 * enqueue() hands it to Callback.onFailure. RetryAndFollowUpInterceptor does not retry it (no exchange has failed).
 * Each attempt's response is checked for a fence's 409 on the way back; the response is returned unchanged. The
 * decision, the block and the header writes are {@link HttpAttempt} and {@link RequestHeaders#OKHTTP_BUILDER}.
 *
 * <p>Inlined into OkHttp, so it may name okhttp3 classes in its body (resolved by the application's loader), but its
 * method signatures use JDK types only: the agent's loader, which reads them, cannot see OkHttp. Only methods that
 * OkHttp 4.0 through 5.x all have (Java names of Kotlin properties: method(), url(), code()). No lambdas.
 */
public final class ProceedAdvice {
  private ProceedAdvice() {}

  /** Returns true when this proceed enters the bridge stage (the exit then looks at the response). */
  @Advice.OnMethodEnter
  public static boolean enter(@Advice.FieldValue("interceptors") List<?> interceptors,
      @Advice.FieldValue("index") int index,
      @Advice.Argument(value = 0, readOnly = false, typing = Assigner.Typing.DYNAMIC) Object request)
      throws IOException {
    try {
      if (index >= interceptors.size() || !(interceptors.get(index) instanceof BridgeInterceptor)) {
        return false;
      }
      HttpUrl url = ((Request) request).url();
      Decision d = HttpAttempt.decide(((Request) request).method(), url.scheme(), url.host(), url.port());
      if (d.isTag()) {
        Request.Builder copy = ((Request) request).newBuilder();
        RequestHeaders.OKHTTP_BUILDER.tag(copy, d);
        request = copy.build();
      }
      return true;
    } catch (Throwable blockedOrAgentError) {
      HttpAttempt.failed(blockedOrAgentError); // rethrows the block; an agent error is counted, the attempt goes on
      return false;
    }
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.Enter boolean bridge,
      @Advice.Return(typing = Assigner.Typing.DYNAMIC) Object response) {
    if (bridge && response != null && ((Response) response).code() == 409) {
      HttpAttempt.responded(409, ((Response) response).header(HttpHook.REJECTED_HEADER));
    }
  }
}
