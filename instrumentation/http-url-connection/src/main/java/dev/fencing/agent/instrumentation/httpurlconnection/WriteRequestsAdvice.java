package dev.fencing.agent.instrumentation.httpurlconnection;

import dev.fencing.agent.bootstrap.FencingBlockedException;
import dev.fencing.agent.bootstrap.HttpAttempt;
import dev.fencing.agent.bootstrap.JdkHttpAttempts;
import dev.fencing.agent.bootstrap.ReentryGuard;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.net.URL;
import net.bytebuddy.asm.Advice;

/**
 * On sun.net.www.http.HttpClient.writeRequests(MessageHeader, PosterOutputStream), before a request of an
 * HttpURLConnection is written: each attempt is decided on its own (JdkHttpAttempts.urlConnectionAttempt), tagged in
 * the headers about to be written, or blocked with the FencingBlockedException (an IOException, as any failure of
 * the write) before any byte of it leaves. Inside another hook (a library on top of HttpURLConnection that is hooked
 * itself) the re-entry guard leaves it to that hook. Inlined into java.base: bootstrap and JDK classes only; the
 * JDK-internal MessageHeader and the connection are passed on as Object, with this class's lookup on the first run.
 */
public final class WriteRequestsAdvice {
  private WriteRequestsAdvice() {}

  /** Returns whether the guard was entered (exit leaves it then). Only the deliberate block leaves as an exception. */
  @Advice.OnMethodEnter
  public static boolean enter(@Advice.This Object connection, @Advice.Argument(0) Object requests,
      @Advice.FieldValue("url") URL url) throws IOException {
    boolean guarded = false;
    try {
      boolean outermost = ReentryGuard.enter();
      guarded = true;
      if (outermost && requests != null && url != null) {
        if (!JdkHttpAttempts.urlConnectionReady()) {
          JdkHttpAttempts.initUrlConnection(MethodHandles.lookup());
        }
        JdkHttpAttempts.urlConnectionAttempt(connection, requests, url);
      }
      return true;
    } catch (Throwable blockedOrAgentError) {
      FencingBlockedException blocked = HttpAttempt.blocked(blockedOrAgentError); // null after counting an agent error
      if (blocked != null) {
        ReentryGuard.exit(); // the exit advice does not run when the enter advice throws
        throw blocked;
      }
      return guarded;
    }
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit(@Advice.Enter boolean entered) {
    if (entered) {
      ReentryGuard.exit();
    }
  }
}
