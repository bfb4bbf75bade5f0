package dev.fencing.sample.spring;

import jakarta.servlet.http.HttpSession;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** A per-visitor counter kept in the HTTP session (shared by every replica with the "session" profile). */
@RestController
public class VisitController {
  @GetMapping("/visits")
  public int visit(HttpSession session) {
    Integer seen = (Integer) session.getAttribute("visits");
    int now = seen == null ? 1 : seen + 1;
    session.setAttribute("visits", now);
    return now;
  }
}
