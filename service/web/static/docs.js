// Starts Swagger UI on /v1/docs from the locally served bundle (no inline script: the page's CSP
// allows scripts of this service only). The validator badge would call an outside service: off.
(function () {
  "use strict";
  window.addEventListener("DOMContentLoaded", function () {
    window.ui = SwaggerUIBundle({
      url: "/v1/openapi.json",
      dom_id: "#swagger-ui",
      deepLinking: true,
      validatorUrl: null,
      presets: [SwaggerUIBundle.presets.apis],
      layout: "BaseLayout"
    });
  });
})();
