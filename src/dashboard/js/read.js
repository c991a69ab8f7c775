// A page's first read: the API's answer, or (null) the page shows what
// went wrong under its title — `missing` for a 404, when given.

import { api } from "./api.js";
import { h, notice, show } from "./dom.js";

export async function read(title, path, missing) {
  try {
    return await api(path);
  } catch (e) {
    show(h("h1", {}, title), notice(e.status === 404 && missing ? missing : e.message, "error"));
    return null;
  }
}
