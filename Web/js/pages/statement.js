// The accessibility statement: static text, translated like every page.
import { startPage, pageReady } from "../app/page.js";

await startPage();
pageReady();
